import pino, { type Logger } from 'pino';

/** Logs go to stderr only: in stdio mode stdout is the protocol channel. */
export function createLogger(level = process.env.TOOLGATE_LOG_LEVEL ?? 'info'): Logger {
  return pino({ level, base: { pid: process.pid }, name: 'toolgate' }, pino.destination({ fd: 2, sync: true }));
}
