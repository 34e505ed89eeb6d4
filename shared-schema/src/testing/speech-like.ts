/**
 * A speech-like test signal, made by arithmetic alone (the codec's unit tests need audio but no
 * corpus): a glottal pulse train whose pitch glides, through three formant resonators that move
 * every syllable, in syllables of 120–300 ms with an attack and a decay, words separated by digital
 * silence. Not speech, but what the watermark cares about is there: energy that comes and goes in
 * time and across 0.5–3.5 kHz, and silence that must stay silent.
 */
export function speechLike(seconds: number, sampleRate: number, seed = 1): Float32Array {
  let state = seed >>> 0 || 1;
  const random = () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
  const out = new Float32Array(Math.round(seconds * sampleRate));
  const formants = [0, 0, 0].map(() => ({ y1: 0, y2: 0, a1: 0, a2: 0, gain: 0 }));
  const setFormants = () => {
    const centres = [300 + random() * 600, 900 + random() * 1300, 2200 + random() * 1000];
    centres.forEach((centre, i) => {
      const radius = Math.exp((-Math.PI * (60 + 40 * i)) / sampleRate);
      formants[i]!.a1 = 2 * radius * Math.cos((2 * Math.PI * centre) / sampleRate);
      formants[i]!.a2 = -radius * radius;
      formants[i]!.gain = (1 - radius) * (i === 0 ? 1 : 0.6 / i);
    });
  };
  let at = Math.round(0.2 * sampleRate);
  let pitch = 110 + random() * 120;
  let phase = 0;
  while (at < out.length) {
    const syllables = 1 + Math.floor(random() * 4);
    for (let s = 0; s < syllables && at < out.length; s++) {
      setFormants();
      const length = Math.round((0.12 + random() * 0.18) * sampleRate);
      const level = 0.15 + random() * 0.35;
      const glide = (random() - 0.5) * 40;
      for (let i = 0; i < length && at + i < out.length; i++) {
        const t = i / length;
        const envelope = Math.min(1, t * 8) * Math.min(1, (1 - t) * 5);
        phase += (pitch + glide * t) / sampleRate;
        const pulse = phase >= 1 ? 1 : 0;
        if (phase >= 1) phase -= 1;
        // a little breath noise beside the pulses
        const source = pulse + 0.02 * (random() - 0.5);
        let value = 0;
        for (const f of formants) {
          const y = f.gain * source + f.a1 * f.y1 + f.a2 * f.y2;
          f.y2 = f.y1;
          f.y1 = y;
          value += y;
        }
        out[at + i] = level * envelope * value * 6;
      }
      at += length;
      pitch = Math.max(80, Math.min(260, pitch + (random() - 0.5) * 30));
    }
    // the pause between words: digital silence
    for (const f of formants) f.y1 = f.y2 = 0;
    at += Math.round((0.08 + random() * 0.25) * sampleRate);
  }
  let peak = 0;
  for (const x of out) peak = Math.max(peak, Math.abs(x));
  if (peak > 0) for (let i = 0; i < out.length; i++) out[i] = (out[i]! / peak) * 0.7;
  return out;
}

/** `parts` one after another, as one signal. */
export function concatSamples(...parts: Float32Array[]): Float32Array {
  const joined = new Float32Array(parts.reduce((sum, part) => sum + part.length, 0));
  let at = 0;
  for (const part of parts) {
    joined.set(part, at);
    at += part.length;
  }
  return joined;
}
