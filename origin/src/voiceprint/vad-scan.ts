import { protobufFields } from './onnx-protobuf.js';

/**
 * Silero v5 runs one 32 ms frame per call, so a 10 s file is 312 `session.run` calls, and on
 * onnxruntime-web a fifth to a third of each call's time goes to moving tensors in and out.
 * This wraps the unchanged Silero graph as the body of an ONNX `Scan` over frames: the runtime steps
 * through the frames itself, carrying the LSTM state from one to the next exactly as the per-frame
 * loop did, and one call covers a whole block of frames.
 *
 * The wrapper is built from the model's own protobuf without decoding the graph: the Scan body is
 * the original GraphProto's fields copied byte for byte, with only the order of its input and output
 * declarations changed (Scan wants the carried state first) and the `sr` input dropped: the outer
 * graph holds `sr` = 16000 as a constant, which the body reads as an outer-scope value.
 */

class Writer {
  private readonly parts: Uint8Array[] = [];

  varint(value: number): this {
    const bytes: number[] = [];
    let v = value;
    while (v >= 0x80) {
      bytes.push((v % 0x80) | 0x80);
      v = Math.floor(v / 0x80);
    }
    bytes.push(v);
    this.parts.push(Uint8Array.from(bytes));
    return this;
  }

  raw(bytes: Uint8Array): this {
    this.parts.push(bytes);
    return this;
  }

  /** Field `number` as a varint (wire type 0). */
  int(number: number, value: number): this {
    return this.varint(number * 8).varint(value);
  }

  /** Field `number` as length-delimited bytes (wire type 2). */
  bytes(number: number, bytes: Uint8Array): this {
    return this.varint(number * 8 + 2)
      .varint(bytes.length)
      .raw(bytes);
  }

  string(number: number, text: string): this {
    return this.bytes(number, new TextEncoder().encode(text));
  }

  message(number: number, build: (writer: Writer) => void): this {
    const inner = new Writer();
    build(inner);
    return this.bytes(number, inner.finish());
  }

  finish(): Uint8Array {
    const out = new Uint8Array(this.parts.reduce((sum, part) => sum + part.length, 0));
    let offset = 0;
    for (const part of this.parts) {
      out.set(part, offset);
      offset += part.length;
    }
    return out;
  }
}

const utf8 = new TextDecoder();

function valueInfoName(valueInfo: Uint8Array): string {
  for (const field of protobufFields(valueInfo)) if (field.number === 1 && field.bytes) return utf8.decode(field.bytes);
  return '';
}

// ONNX field numbers.
const MODEL_IR_VERSION = 1;
const MODEL_GRAPH = 7;
const MODEL_OPSET_IMPORT = 8;
const GRAPH_NODE = 1;
const GRAPH_NAME = 2;
const GRAPH_INITIALIZER = 5;
const GRAPH_INPUT = 11;
const GRAPH_OUTPUT = 12;
const NODE_INPUT = 1;
const NODE_OUTPUT = 2;
const NODE_NAME = 3;
const NODE_OP_TYPE = 4;
const NODE_ATTRIBUTE = 5;
const ATTRIBUTE_NAME = 1;
const ATTRIBUTE_I = 3;
const ATTRIBUTE_G = 6;
const ATTRIBUTE_TYPE = 20;
const ATTRIBUTE_TYPE_INT = 2;
const ATTRIBUTE_TYPE_GRAPH = 5;
const VALUE_INFO_NAME = 1;
const VALUE_INFO_TYPE = 2;
const TYPE_TENSOR = 1;
const TENSOR_ELEM_TYPE = 1;
const TENSOR_SHAPE = 2;
const SHAPE_DIM = 1;
const DIM_VALUE = 1;
const DIM_PARAM = 2;
const TENSOR_DATA_TYPE = 2;
const TENSOR_INT64_DATA = 7;
const TENSOR_NAME = 8;
const FLOAT = 1;
const INT64 = 7;

/** Names of the wrapper's inputs and outputs. */
export const SCAN_FRAMES = 'frames';
export const SCAN_STATE_IN = 'state_in';
export const SCAN_STATE_OUT = 'state_out';
export const SCAN_PROBABILITIES = 'probabilities';

/** A tensor's declaration; without `dims` its shape is left to the runtime's inference. */
function tensorValueInfo(writer: Writer, name: string, elemType: number, dims?: Array<number | string>): void {
  writer.string(VALUE_INFO_NAME, name).message(VALUE_INFO_TYPE, (type) =>
    type.message(TYPE_TENSOR, (tensor) => {
      tensor.int(TENSOR_ELEM_TYPE, elemType);
      if (dims) {
        tensor.message(TENSOR_SHAPE, (shape) => {
          for (const dim of dims)
            shape.message(SHAPE_DIM, (d) => (typeof dim === 'number' ? d.int(DIM_VALUE, dim) : d.string(DIM_PARAM, dim)));
        });
      }
    }),
  );
}

/**
 * The Silero v5 model (inputs `input` [1, 576], `state` [2, 1, 128], `sr`; outputs `output` [1, 1],
 * `stateN`) as a model with inputs `frames` [T, 1, 576] and `state_in`, and outputs
 * `probabilities` [T, 1, 1] and `state_out`: the same thing, frame after frame, at 16 kHz.
 */
export function sileroScanModel(model: Uint8Array): Uint8Array {
  const modelFields = [...protobufFields(model)];
  const graph = modelFields.find((field) => field.number === MODEL_GRAPH)?.bytes;
  if (!graph) throw new Error('the Silero model has no graph');
  const body = new Writer();
  const inputs = new Map<string, Uint8Array>();
  const outputs = new Map<string, Uint8Array>();
  for (const field of protobufFields(graph)) {
    if (field.number === GRAPH_INPUT) inputs.set(valueInfoName(field.bytes!), field.raw);
    else if (field.number === GRAPH_OUTPUT) outputs.set(valueInfoName(field.bytes!), field.raw);
    else body.raw(field.raw);
  }
  const expected = [inputs.get('state'), inputs.get('input'), inputs.get('sr'), outputs.get('stateN'), outputs.get('output')];
  if (expected.some((field) => !field) || inputs.size !== 3 || outputs.size !== 2) {
    throw new Error(`unexpected Silero signature: inputs [${[...inputs.keys()]}], outputs [${[...outputs.keys()]}]`);
  }
  // Scan's body: carried state first, then the per-iteration slices; the same order for outputs.
  body.raw(inputs.get('state')!).raw(inputs.get('input')!).raw(outputs.get('stateN')!).raw(outputs.get('output')!);
  const bodyBytes = body.finish();

  const outer = new Writer()
    .message(GRAPH_NODE, (node) => {
      node
        .string(NODE_INPUT, SCAN_STATE_IN)
        .string(NODE_INPUT, SCAN_FRAMES)
        .string(NODE_OUTPUT, SCAN_STATE_OUT)
        .string(NODE_OUTPUT, SCAN_PROBABILITIES)
        .string(NODE_NAME, 'silero_frames')
        .string(NODE_OP_TYPE, 'Scan')
        .message(NODE_ATTRIBUTE, (a) =>
          a.string(ATTRIBUTE_NAME, 'body').bytes(ATTRIBUTE_G, bodyBytes).int(ATTRIBUTE_TYPE, ATTRIBUTE_TYPE_GRAPH),
        )
        .message(NODE_ATTRIBUTE, (a) =>
          a.string(ATTRIBUTE_NAME, 'num_scan_inputs').int(ATTRIBUTE_I, 1).int(ATTRIBUTE_TYPE, ATTRIBUTE_TYPE_INT),
        );
    })
    .string(GRAPH_NAME, 'silero_scan')
    // sr as a constant lets the runtime fold Silero's 8 kHz / 16 kHz branch away once, at load.
    .message(GRAPH_INITIALIZER, (tensor) =>
      tensor
        .int(TENSOR_DATA_TYPE, INT64)
        .message(TENSOR_INT64_DATA, (data) => data.varint(16000))
        .string(TENSOR_NAME, 'sr'),
    )
    .message(GRAPH_INPUT, (w) => tensorValueInfo(w, SCAN_STATE_IN, FLOAT, [2, 'batch', 128]))
    .message(GRAPH_INPUT, (w) => tensorValueInfo(w, SCAN_FRAMES, FLOAT, ['frames', 'batch', 'samples']))
    .message(GRAPH_OUTPUT, (w) => tensorValueInfo(w, SCAN_STATE_OUT, FLOAT))
    .message(GRAPH_OUTPUT, (w) => tensorValueInfo(w, SCAN_PROBABILITIES, FLOAT));

  const wrapped = new Writer();
  for (const field of modelFields) {
    if (field.number === MODEL_IR_VERSION || field.number === MODEL_OPSET_IMPORT) wrapped.raw(field.raw);
  }
  wrapped.bytes(MODEL_GRAPH, outer.finish());
  return wrapped.finish();
}
