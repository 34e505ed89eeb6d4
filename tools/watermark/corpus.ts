/**
 * The speech the watermark evaluation marks: real speech from the dev half of the shared corpus
 * (utterances of one speaker joined to at least `minSeconds`), and synthetic speech made here by
 * Debian's flite voices and festival's HTS voice. Files are cached under `cacheDir`.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { readAudio } from './audio-io.js';

export interface SpeechFile {
  name: string;
  set: string;
  samples: Float32Array;
  sampleRate: number;
}

const SENTENCES = [
  'Every synthesis of a protected voice needs the consent of its owner, and that consent can be withdrawn at any time.',
  'The quick brown fox jumps over the lazy dog, while the cautious cat watches from the garden wall.',
  'Please call me back on five five five, two three four, nine eight seven six before noon tomorrow.',
  'A watermark that survives re-encoding tells anyone who finds the clip who authorized this voice.',
  'The weather will be cloudy in the morning, with a chance of light rain spreading from the west.',
  'Our train leaves at a quarter past seven, so we should pack the bags tonight and sleep early.',
  'She sells sea shells by the sea shore, and the shells she sells are surely sea shells.',
  'Numbers such as forty two, one hundred and seven, and nine thousand are read out one by one.',
];

export const SYNTHETIC_VOICES = ['flite:slt', 'flite:rms', 'flite:awb', 'flite:kal16', 'festival:cmu_us_slt_arctic_hts'] as const;

export function syntheticSpeech(cacheDir: string, perVoice: number): SpeechFile[] {
  mkdirSync(cacheDir, { recursive: true });
  const files: SpeechFile[] = [];
  for (const voice of SYNTHETIC_VOICES) {
    const [engine, name] = voice.split(':') as [string, string];
    for (let i = 0; i < perVoice; i++) {
      const text = `${SENTENCES[i % SENTENCES.length]} ${SENTENCES[(i + 3) % SENTENCES.length]}`;
      const path = join(cacheDir, `${engine}-${name}-${i}.wav`);
      if (!existsSync(path)) {
        if (engine === 'flite') execFileSync('flite', ['-voice', name, '-t', text, '-o', path]);
        else {
          const textPath = `${path}.txt`;
          writeFileSync(textPath, text);
          execFileSync('text2wave', ['-eval', `(voice_${name})`, textPath, '-o', path]);
        }
      }
      const audio = readAudio(path);
      files.push({ name: `${name}-${i}`, set: `synthetic:${name}`, ...audio });
    }
  }
  return files;
}

interface ManifestRow {
  path: string;
  set: string;
  speaker: string;
  seconds: number;
}

function manifest(devDir: string): ManifestRow[] {
  return readFileSync(join(devDir, 'manifest.tsv'), 'utf8')
    .trim()
    .split('\n')
    .slice(1)
    .map((line) => {
      const [path, set, speaker, seconds] = line.split('\t') as [string, string, string, string];
      return { path, set, speaker, seconds: Number(seconds) };
    });
}

/** Utterances of one speaker joined (0.3 s of silence between) until `minSeconds`, `perSet` files per set, at 16 kHz. */
export function devSpeech(devDir: string, cacheDir: string, perSet: number, minSeconds: number): SpeechFile[] {
  mkdirSync(cacheDir, { recursive: true });
  const rows = manifest(devDir);
  const bySet = new Map<string, Map<string, ManifestRow[]>>();
  for (const row of rows) {
    const speakers = bySet.get(row.set) ?? new Map<string, ManifestRow[]>();
    bySet.set(row.set, speakers);
    speakers.set(row.speaker, [...(speakers.get(row.speaker) ?? []), row]);
  }
  const files: SpeechFile[] = [];
  for (const [set, speakers] of [...bySet].sort(([a], [b]) => a.localeCompare(b))) {
    const chosen = [...speakers.values()].filter((utterances) => utterances.reduce((sum, row) => sum + row.seconds, 0) >= minSeconds);
    // spread the picks over the speakers
    for (let i = 0; i < Math.min(perSet, chosen.length); i++) {
      const utterances = chosen[Math.floor((i * chosen.length) / Math.min(perSet, chosen.length))]!;
      const parts: Float32Array[] = [];
      let seconds = 0;
      for (const row of utterances) {
        if (seconds >= minSeconds) break;
        const cached = join(cacheDir, `${row.path.replaceAll('/', '_')}.f32`);
        let samples: Float32Array;
        if (existsSync(cached)) samples = new Float32Array(readFileSync(cached).buffer.slice(0));
        else {
          samples = readAudio(join(devDir, row.path), 16_000).samples;
          writeFileSync(cached, Buffer.from(samples.buffer));
        }
        parts.push(samples, new Float32Array(4800));
        seconds += samples.length / 16_000 + 0.3;
      }
      const joined = new Float32Array(parts.reduce((sum, part) => sum + part.length, 0));
      let at = 0;
      for (const part of parts) {
        joined.set(part, at);
        at += part.length;
      }
      files.push({ name: `${utterances[0]!.speaker}`, set: `dev:${set}`, samples: joined, sampleRate: 16_000 });
    }
  }
  return files;
}
