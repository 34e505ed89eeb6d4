import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

/** A scratch folder for models and files a test writes, removed after it. */
export class TempDir {
  readonly path = mkdtempSync(path.join(tmpdir(), 'vip-voiceprint-'));

  file(name: string): string {
    return path.join(this.path, name);
  }

  remove(): void {
    rmSync(this.path, { recursive: true, force: true });
  }
}
