import type { SelectorSubject } from './openapi/select.js';
import type { PathSegment } from './yaml-source.js';
import type { CompiledTool } from './types.js';

/** A provider tool before its category is known, with what category selectors match against. */
export interface ToolDraft {
  tool: Omit<CompiledTool, 'category'>;
  subject: SelectorSubject;
  /** Where the manifest wrote the tool's name (override, inline tool), for findings about it. */
  namedAt?: PathSegment[];
}
