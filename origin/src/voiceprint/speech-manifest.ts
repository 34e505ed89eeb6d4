import { readFileSync } from 'node:fs';
import path from 'node:path';

/** One recording of a speech folder: the committed fixtures (fixtures/speech) and ../shared/speech/{train,dev} alike. */
export interface SpeechRecording {
  /** Relative to the folder. */
  path: string;
  set: string;
  /** `set:id`, unique across sets. */
  speaker: string;
  seconds: number;
}

const COLUMNS = ['path', 'set', 'speaker', 'seconds'] as const;

/** The folder's `manifest.tsv` (a header row naming the columns, then one row per recording), in file order. */
export function readSpeechManifest(dir: string): SpeechRecording[] {
  const file = path.join(dir, 'manifest.tsv');
  const [header, ...lines] = readFileSync(file, 'utf8').trim().split('\n');
  const names = (header ?? '').split('\t');
  const [pathAt, setAt, speakerAt, secondsAt] = COLUMNS.map((column) => {
    const index = names.indexOf(column);
    if (index < 0) throw new Error(`${file} has no "${column}" column`);
    return index;
  }) as [number, number, number, number];
  return lines.map((line) => {
    const cells = line.split('\t');
    const recording = { path: cells[pathAt], set: cells[setAt], speaker: cells[speakerAt], seconds: Number(cells[secondsAt]) };
    if (!recording.path || !recording.set || !recording.speaker || !Number.isFinite(recording.seconds)) {
      throw new Error(`${file}: row "${line}" lacks a field`);
    }
    return recording as SpeechRecording;
  });
}
