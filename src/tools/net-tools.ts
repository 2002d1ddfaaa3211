import type { AnyTool } from '../core/define-tool.js';
import { fetchUrlTool } from './fetch-url/fetch-url.js';

/** Tools that reach the network: off by default (no domain rule, no fetch). */
export const netTools: AnyTool[] = [fetchUrlTool];
