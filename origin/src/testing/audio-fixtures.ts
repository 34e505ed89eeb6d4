/**
 * The encoded audio committed under `fixtures/audio/`, each made once from the reference speech in
 * `fixtures/fbank/` by `scripts/make-test-fixtures.ts` (with ffmpeg). The tests read the files and
 * never run ffmpeg; this table is what both sides agree on.
 */
export interface AudioFixture {
  /** File name under `fixtures/audio/`. */
  file: string;
  /** ffmpeg inputs: a file under `fixtures/` or, after `-f lavfi`, a generated source. */
  inputs: string[];
  inputArgs?: string[];
  outputArgs: string[];
}

export interface FormatFixture extends AudioFixture {
  /** What the decoder tests call it. */
  name: string;
  /** The container `sniffContainer` must report, whatever the file is called. */
  container: 'wav' | 'flac' | 'mp3' | 'ogg-opus' | 'ogg-vorbis' | 'webm' | 'm4a';
}

const fromA = (file: string, outputArgs: string[]) => ({ file, inputs: ['fbank/a.wav'], outputArgs });

/** One file per container and codec the service accepts: 2.8 s of speech (fbank/a.wav). */
export const FORMAT_FIXTURES: FormatFixture[] = [
  { name: 'wav pcm16', container: 'wav', ...fromA('a.pcm16.wav', ['-c:a', 'pcm_s16le']) },
  { name: 'wav pcm24 (extensible)', container: 'wav', ...fromA('a.pcm24.wav', ['-c:a', 'pcm_s24le']) },
  { name: 'wav pcm32', container: 'wav', ...fromA('a.pcm32.wav', ['-c:a', 'pcm_s32le']) },
  { name: 'wav float32', container: 'wav', ...fromA('a.float32.wav', ['-c:a', 'pcm_f32le']) },
  { name: 'flac', container: 'flac', ...fromA('a.flac', ['-c:a', 'flac']) },
  { name: 'mp3', container: 'mp3', ...fromA('a.mp3', ['-c:a', 'libmp3lame', '-b:a', '128k']) },
  { name: 'ogg opus', container: 'ogg-opus', ...fromA('a.opus', ['-c:a', 'libopus', '-b:a', '64k']) },
  { name: 'ogg vorbis', container: 'ogg-vorbis', ...fromA('a.ogg', ['-c:a', 'libvorbis', '-q:a', '5']) },
  { name: 'webm opus', container: 'webm', ...fromA('a.webm', ['-c:a', 'libopus', '-b:a', '64k']) },
  { name: 'm4a aac', container: 'm4a', ...fromA('a.m4a', ['-c:a', 'aac', '-b:a', '128k']) },
];

const HALF_A_SECOND = ['-t', '0.5'];
const OPUS_48K = ['-ar', '48000', '-c:a', 'libopus', '-b:a', '32k'];
const opus48k = (name: 'a' | 'b' | 'c') => ({ file: `${name}.48000.opus`, inputs: [`fbank/${name}.wav`], outputArgs: OPUS_48K });

/** The other inputs the decoder, resampler, pipeline tests and the voiceprint bench need. */
export const OTHER_AUDIO_FIXTURES = {
  flac44k: fromA('a.44100.flac', ['-c:a', 'flac', '-ar', '44100']),
  flac48k: fromA('a.48000.flac', ['-c:a', 'flac', '-ar', '48000']),
  /**
   * Stereo, speech on the left and digital silence on the right: PCM, so the mono mix is exact (the
   * FLAC decoder drops the last 27 ms of a stereo FLAC file).
   */
  leftOnlyStereo: fromA('a.left-only.wav', ['-c:a', 'pcm_s16le', '-af', 'pan=stereo|c0=c0|c1=0*c0']),
  /** 30 dB louder than the source: clipped. */
  loud: fromA('a.loud.flac', ['-c:a', 'flac', '-af', 'volume=30dB']),
  /** Formats the service does not claim. */
  aiff: fromA('a.aiff', HALF_A_SECOND),
  adtsAac: fromA('a.aac', ['-c:a', 'aac', '-f', 'adts', ...HALF_A_SECOND]),
  oggFlac: fromA('a.oga', ['-c:a', 'flac', '-f', 'ogg', ...HALF_A_SECOND]),
  alawWav: fromA('a.alaw.wav', ['-c:a', 'pcm_alaw', ...HALF_A_SECOND]),
  /** Under the 0.5 s minimum. */
  short: fromA('a.short.wav', ['-c:a', 'pcm_s16le', '-t', '0.3']),
  /** 20 minutes of 48 kHz FLAC silence: small as a file, 230 MB as float samples. */
  longSilence: {
    file: 'silence-20min.flac',
    inputs: ['anullsrc=r=48000:cl=mono'],
    inputArgs: ['-f', 'lavfi'],
    outputArgs: ['-t', '1200', '-c:a', 'flac'],
  },
  /** Each reference recording as a 48 kHz Ogg Opus upload: decoding and resampling both exercised. */
  opusA: opus48k('a'),
  opusB: opus48k('b'),
  opusC: opus48k('c'),
  /** 10 s of speech (c then a) as a 48 kHz Ogg Opus upload: what the voiceprint bench embeds. */
  benchSpeech: {
    file: 'speech-10s.48000.opus',
    inputs: ['fbank/c.wav', 'fbank/a.wav'],
    outputArgs: ['-filter_complex', 'concat=n=2:v=0:a=1', '-t', '10', ...OPUS_48K],
  },
} satisfies Record<string, AudioFixture>;
