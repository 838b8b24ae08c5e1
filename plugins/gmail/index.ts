/**
 * Gmail (manifests/gmail.yaml). The manifest's inline tools read, label and trash mail; this
 * plugin adds what needs code: composing MIME messages (gmail_send_message, gmail_create_draft)
 * and decoding the base64url text parts of messages that are read.
 */
import type { ProviderPlugin } from '../../core/catalog/plugins/types.js';
import { composeTools } from './compose.js';
import { readableResult } from './read.js';

/** The gmail plugin. */
export const gmailPlugin: ProviderPlugin = {
  id: 'gmail',
  tools: composeTools,
  shapeResponse: (response, tool) => readableResult(response, tool),
};
