/**
 * The protobuf wire-format reading the ONNX helpers need (metadata, the VAD graph rewrite):
 * onnxruntime exposes neither, and a protobuf library would be a large dependency for so little.
 */

export interface ProtobufField {
  number: number;
  /** The whole field, key included, as it sits in the message. */
  raw: Uint8Array;
  /** The payload of a length-delimited field. */
  bytes?: Uint8Array;
}

export function* protobufFields(buffer: Uint8Array): Generator<ProtobufField> {
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
    const start = offset;
    const tag = varint();
    const number = Math.floor(tag / 8);
    const wireType = tag % 8;
    let bytes: Uint8Array | undefined;
    if (wireType === 0) varint();
    else if (wireType === 1) offset += 8;
    else if (wireType === 5) offset += 4;
    else if (wireType === 2) {
      const length = varint();
      if (offset + length > buffer.length) throw new Error('truncated ONNX protobuf');
      bytes = buffer.subarray(offset, offset + length);
      offset += length;
    } else throw new Error(`unsupported protobuf wire type ${wireType}`);
    yield { number, raw: buffer.subarray(start, offset), bytes };
  }
}
