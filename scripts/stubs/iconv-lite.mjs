// Build-time stand-in for iconv-lite (bundled only through raw-body, which the SDK's legacy SSE
// server transport uses to read a POST body). iconv-lite's tables are ~490 KB of the bundle that
// every start-up had to parse; Node's TextDecoder (full ICU) decodes the same charsets.
// raw-body needs getDecoder(); an unknown name must throw "Encoding not recognized: …" (it maps
// that message to 415 encoding.unsupported). tests/build/stubs.test.ts compares it with iconv-lite.

function decoderFor(encoding) {
  try {
    return new TextDecoder(String(encoding).toLowerCase().trim());
  } catch {
    throw new Error(`Encoding not recognized: '${encoding}' (searched as: '${String(encoding).toLowerCase()}')`);
  }
}

export function encodingExists(encoding) {
  try { decoderFor(encoding); return true; } catch { return false; }
}

export function getDecoder(encoding) {
  const d = decoderFor(encoding);
  return {
    write: (buf) => d.decode(buf, { stream: true }),
    end: () => d.decode() || undefined,
  };
}

export function decode(buf, encoding) {
  return decoderFor(encoding).decode(buf);
}

export default { encodingExists, getDecoder, decode };
