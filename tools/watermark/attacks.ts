/**
 * What the evaluation does to a marked file: the conditions issue 32 lists (required) and harder
 * ones of the same families, each as ffmpeg would do it to a real file.
 */

import { execFileSync } from 'node:child_process';
import { pcm16Wav, throughFfmpeg } from './audio-io.js';

export interface Attacked {
  samples: Float32Array;
  sampleRate: number;
}

export interface Condition {
  name: string;
  required: boolean;
  apply(marked: Float32Array, sampleRate: number, random: () => number): Attacked;
}

const codec = (name: string, args: string[], format: string, required: boolean, rate?: number): Condition => ({
  name,
  required,
  apply: (marked, sampleRate) => ({
    samples: throughFfmpeg(marked, sampleRate, [...(rate ? ['-ar', String(rate)] : []), ...args], format, sampleRate),
    sampleRate,
  }),
});

const filter = (name: string, chain: string, required: boolean): Condition =>
  codec(name, ['-af', chain, '-c:a', 'pcm_s16le'], 'wav', required);

const resampled = (rate: number): Condition => ({
  name: `resample ${rate / 1000} kHz and back`,
  required: true,
  apply: (marked, sampleRate) => {
    const there = throughFfmpeg(marked, sampleRate, ['-ar', String(rate), '-c:a', 'pcm_s16le'], 'wav', rate);
    return { samples: throughFfmpeg(there, rate, ['-ar', String(sampleRate), '-c:a', 'pcm_s16le'], 'wav', sampleRate), sampleRate };
  },
});

function gain(db: number): Condition {
  return {
    name: `gain ${db > 0 ? '+' : ''}${db} dB`,
    required: true,
    apply: (marked, sampleRate) => {
      const scale = 10 ** (db / 20);
      // through a 16-bit WAV: what does not fit clips, as it would in a file
      return {
        samples: throughFfmpeg(
          marked.map((x) => x * scale),
          sampleRate,
          ['-c:a', 'pcm_s16le'],
          'wav',
        ),
        sampleRate,
      };
    },
  };
}

function whiteNoise(snrDb: number, required: boolean): Condition {
  return {
    name: `white noise ${snrDb} dB SNR`,
    required,
    apply: (marked, sampleRate, random) => {
      let power = 0;
      for (const x of marked) power += x * x;
      power /= marked.length;
      const sigma = Math.sqrt(power / 10 ** (snrDb / 10));
      const noisy = new Float32Array(marked.length);
      for (let i = 0; i < marked.length; i++) {
        // Box–Muller
        const u = Math.max(1e-12, random());
        noisy[i] = marked[i]! + sigma * Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * random());
      }
      return { samples: noisy, sampleRate };
    },
  };
}

/** Metadata stripped: the file re-muxed as a plain 16-bit WAV by ffmpeg, no metadata kept. */
const remuxed: Condition = {
  name: 'metadata stripped (re-muxed WAV)',
  required: true,
  apply: (marked, sampleRate) => {
    const wav = pcm16Wav(marked, sampleRate);
    const out = execFileSync('ffmpeg', ['-v', 'error', '-i', '-', '-map_metadata', '-1', '-c:a', 'copy', '-f', 'wav', '-'], {
      input: wav,
      maxBuffer: 1 << 30,
    });
    const decoded = execFileSync('ffmpeg', ['-v', 'error', '-i', '-', '-f', 'f32le', '-'], { input: out, maxBuffer: 1 << 30 });
    return { samples: new Float32Array(decoded.buffer, decoded.byteOffset, decoded.byteLength / 4).slice(), sampleRate };
  },
};

/** Speed changed by `percent` (pitch and tempo, as a resampling player does). */
function speed(percent: number): Condition {
  return {
    name: `speed ${percent > 0 ? '+' : ''}${percent} %`,
    required: false,
    apply: (marked, sampleRate) => ({
      samples: throughFfmpeg(
        marked,
        sampleRate,
        ['-af', `asetrate=${Math.round(sampleRate * (1 + percent / 100))},aresample=${sampleRate}`, '-c:a', 'pcm_s16le'],
        'wav',
      ),
      sampleRate,
    }),
  };
}

export const CONDITIONS: Condition[] = [
  { name: 'marked, untouched', required: true, apply: (samples, sampleRate) => ({ samples, sampleRate }) },
  remuxed,
  codec('MP3 128 kbps', ['-c:a', 'libmp3lame', '-b:a', '128k'], 'mp3', true),
  codec('MP3 64 kbps', ['-c:a', 'libmp3lame', '-b:a', '64k'], 'mp3', true),
  codec('AAC 96 kbps', ['-c:a', 'aac', '-b:a', '96k'], 'adts', true),
  codec('Opus 32 kbps', ['-c:a', 'libopus', '-b:a', '32k'], 'ogg', true, 48_000),
  resampled(8000),
  resampled(22_050),
  resampled(44_100),
  resampled(48_000),
  whiteNoise(20, true),
  gain(-10),
  gain(6),
  // harder: same families, further
  codec('MP3 32 kbps', ['-c:a', 'libmp3lame', '-b:a', '32k'], 'mp3', false),
  codec('AAC 48 kbps', ['-c:a', 'aac', '-b:a', '48k'], 'adts', false),
  codec('Opus 24 kbps', ['-c:a', 'libopus', '-b:a', '24k'], 'ogg', false, 48_000),
  codec('Opus 16 kbps', ['-c:a', 'libopus', '-b:a', '16k'], 'ogg', false, 48_000),
  codec('Vorbis q0 (~64 kbps)', ['-c:a', 'libvorbis', '-q:a', '0'], 'ogg', false, 44_100),
  filter('telephone band 300-3400 Hz, 8 kHz', 'highpass=f=300,lowpass=f=3400,aresample=8000,aresample=16000', false),
  codec('G.711 mu-law 8 kHz', ['-ar', '8000', '-c:a', 'pcm_mulaw'], 'wav', false),
  whiteNoise(10, false),
  filter('echo 60 ms', 'aecho=0.8:0.7:60:0.3', false),
  filter('reverb-like echoes', 'aecho=0.8:0.6:23|41|67:0.4|0.3|0.2', false),
  filter('bass and treble EQ', 'bass=g=6,treble=g=-6', false),
  filter('dynamic range compression', 'acompressor=threshold=0.05:ratio=6:attack=5:release=50:makeup=4', false),
  filter('loudness normalisation', 'loudnorm=I=-16', false),
  speed(2),
  speed(-2),
  speed(3),
  speed(-3),
  filter('tempo +5 % (pitch kept)', 'atempo=1.05', false),
];
