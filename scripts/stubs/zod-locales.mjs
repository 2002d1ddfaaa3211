// Build-time stand-in for zod's `locales` namespace (zod/v4/locales/index.js, ~300 KB of every
// language's messages in the bundle). toolgate uses English only, which zod registers itself
// (classic/schemas.js imports locales/en.js directly); nothing reads z.locales.<xx>.
export { default as en } from 'zod/v4/locales/en.js';
