/**
 * Records one take from the microphone with MediaRecorder (WebM/Opus where the browser has it,
 * else MP4/AAC; the origin decodes both), and reports the input level and the time while it
 * records. How much of a take is speech is not guessed here: the origin measures each take with the
 * voice-activity detector enrollment uses (recordings.ts), so the page and the enrollment agree.
 */

const MIME_TYPES = ['audio/webm;codecs=opus', 'audio/webm', 'audio/mp4', 'audio/ogg;codecs=opus'];
export interface Take {
  file: File;
  seconds: number;
}

export interface Progress {
  /** 0 to 1, scaled for display. */
  level: number;
  seconds: number;
}

export class Recorder {
  private stream: MediaStream | null = null;
  private context: AudioContext | null = null;
  private recorder: MediaRecorder | null = null;
  private chunks: Blob[] = [];
  private frame = 0;
  private startedAt = 0;

  constructor(private readonly onProgress: (progress: Progress) => void) {}

  get recording(): boolean {
    return this.recorder !== null;
  }

  async start(): Promise<void> {
    this.stream = await navigator.mediaDevices.getUserMedia({
      audio: { echoCancellation: false, noiseSuppression: false, autoGainControl: false },
    });
    const mimeType = MIME_TYPES.find((type) => MediaRecorder.isTypeSupported(type));
    this.recorder = new MediaRecorder(this.stream, mimeType ? { mimeType } : {});
    this.chunks = [];
    this.recorder.addEventListener('dataavailable', (event) => this.chunks.push(event.data));
    this.context = new AudioContext();
    const analyser = this.context.createAnalyser();
    analyser.fftSize = 2048;
    this.context.createMediaStreamSource(this.stream).connect(analyser);
    const samples = new Float32Array(analyser.fftSize);
    this.startedAt = performance.now();
    const tick = (now: number) => {
      analyser.getFloatTimeDomainData(samples);
      let sum = 0;
      for (const sample of samples) sum += sample * sample;
      const rms = Math.sqrt(sum / samples.length);
      this.onProgress({ level: Math.min(1, rms * 5), seconds: (now - this.startedAt) / 1000 });
      this.frame = requestAnimationFrame(tick);
    };
    this.frame = requestAnimationFrame(tick);
    this.recorder.start(1000);
  }

  /** Stops and hands back the take as a file named `name` plus the matching extension. */
  async stop(name: string): Promise<Take> {
    const recorder = this.recorder;
    if (!recorder) throw new Error('not recording');
    const stopped = new Promise<void>((resolve) => recorder.addEventListener('stop', () => resolve(), { once: true }));
    recorder.stop();
    await stopped;
    cancelAnimationFrame(this.frame);
    for (const track of this.stream?.getTracks() ?? []) track.stop();
    await this.context?.close();
    this.recorder = null;
    const type = recorder.mimeType || 'audio/webm';
    const extension = type.startsWith('audio/mp4') ? 'm4a' : type.startsWith('audio/ogg') ? 'ogg' : 'webm';
    return {
      file: new File(this.chunks, `${name}.${extension}`, { type }),
      seconds: (performance.now() - this.startedAt) / 1000,
    };
  }
}
