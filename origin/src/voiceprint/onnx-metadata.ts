import { protobufFields } from './onnx-protobuf.js';

/**
 * Reads `metadata_props` (ModelProto field 14, key/value string pairs) straight from the ONNX
 * protobuf, because neither onnxruntime-web nor onnxruntime-node exposes them. Only the top level
 * is walked; the graph and initializers are skipped by length.
 */
export function readOnnxMetadata(model: Uint8Array): Record<string, string> {
  const metadata: Record<string, string> = {};
  for (const field of protobufFields(model)) {
    if (field.number !== 14 || !field.bytes) continue;
    let key = '';
    let value = '';
    for (const entry of protobufFields(field.bytes)) {
      if (entry.number === 1 && entry.bytes) key = utf8.decode(entry.bytes);
      if (entry.number === 2 && entry.bytes) value = utf8.decode(entry.bytes);
    }
    metadata[key] = value;
  }
  return metadata;
}

const utf8 = new TextDecoder();
