/** JSON.parse that answers undefined for text that is not JSON, so a schema reports it. */
export function parseJsonOrUndefined(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
