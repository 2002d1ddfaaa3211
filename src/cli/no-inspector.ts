/**
 * Imported first by cli.ts. Node opens its inspector (a debugger that runs any code it is sent, on
 * 127.0.0.1:9229) in a process that receives SIGUSR1; without a sandbox a command runs as the same
 * user and may send it, then run code inside the server, past every rule and approval. A listener
 * of its own keeps Node from doing so.
 */
process.on('SIGUSR1', () => {});
