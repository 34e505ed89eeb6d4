/**
 * Reads `metadata_props` (ModelProto field 14, key/value string pairs) straight from the ONNX
 * protobuf, because neither onnxruntime-web nor onnxruntime-node exposes them. Only the top level
 * is walked; the graph and initializers are skipped by length.
 */
export function readOnnxMetadata(model: Uint8Array): Record<string, string> {
  const metadata: Record<string, string> = {};
  for (const field of fields(model)) {
    if (field.number !== 14 || !field.bytes) continue;
    let key = '';
    let value = '';
    for (const entry of fields(field.bytes)) {
      if (entry.number === 1 && entry.bytes) key = utf8.decode(entry.bytes);
      if (entry.number === 2 && entry.bytes) value = utf8.decode(entry.bytes);
    }
    metadata[key] = value;
  }
  return metadata;
}

const utf8 = new TextDecoder();

interface Field {
  number: number;
  bytes?: Uint8Array;
}

function* fields(buffer: Uint8Array): Generator<Field> {
  let offset = 0;
  const varint = (): number => {
    let result = 0;
    let scale = 1;
    for (;;) {
      if (offset >= buffer.length) throw new Error('truncated ONNX protobuf');
      const byte = buffer[offset++]!;
      result += (byte & 0x7f) * scale;
      if (byte < 0x80) return result;
      scale *= 128;
    }
  };
  while (offset < buffer.length) {
    const tag = varint();
    const number = Math.floor(tag / 8);
    const wireType = tag % 8;
    if (wireType === 0) varint();
    else if (wireType === 1) offset += 8;
    else if (wireType === 5) offset += 4;
    else if (wireType === 2) {
      const length = varint();
      if (offset + length > buffer.length) throw new Error('truncated ONNX protobuf');
      yield { number, bytes: buffer.subarray(offset, offset + length) };
      offset += length;
      continue;
    } else throw new Error(`unsupported protobuf wire type ${wireType}`);
    yield { number };
  }
}
