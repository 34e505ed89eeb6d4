import { describe, expect, it } from 'vitest';
import {
  checkpointText,
  formatTlogProof,
  fromBase64,
  noteKeyId,
  noteSignatureLine,
  noteVerifierKey,
  openNote,
  parseCheckpointText,
  parseNoteVerifierKey,
  parseTilePath,
  parseTlogProof,
  TlogFormatError,
  tileIndexPath,
  tilePath,
  toBase64,
} from './tlog.js';

async function ed25519() {
  const pair = (await crypto.subtle.generateKey({ name: 'Ed25519' }, true, ['sign', 'verify'])) as CryptoKeyPair;
  const publicKey = new Uint8Array(await crypto.subtle.exportKey('raw', pair.publicKey));
  const sign = async (text: string) => new Uint8Array(await crypto.subtle.sign('Ed25519', pair.privateKey, new TextEncoder().encode(text)));
  return { publicKey, sign };
}

async function signedNote(name: string, text: string) {
  const key = await ed25519();
  const note = `${text}\n${noteSignatureLine(name, await noteKeyId(name, key.publicKey), await key.sign(text))}`;
  return { note, vkey: await noteVerifierKey(name, key.publicKey) };
}

describe('tlog-tiles paths', () => {
  it('writes an index in 3-digit elements, all but the last behind an x, as the spec example does', () => {
    expect(tileIndexPath(1_234_067)).toBe('x001/x234/067');
    expect(tileIndexPath(0)).toBe('000');
    expect(tilePath(0, 1_234_067, 256)).toBe('tile/0/x001/x234/067');
    expect(tilePath(2, 5, 17)).toBe('tile/2/005.p/17');
  });

  it('reads back exactly the paths it writes and nothing else', () => {
    expect(parseTilePath('0/x001/x234/067')).toEqual({ level: 0, index: 1_234_067, width: 256 });
    expect(parseTilePath('63/005.p/255')).toEqual({ level: 63, index: 5, width: 255 });
    for (const bad of ['64/000', '0/5', '0/x000/005', '0/005.p/256', '0/005.p/0', '0/005.p/', 'x/000', '0/000/']) {
      expect(parseTilePath(bad), bad).toBeNull();
    }
  });
});

describe('signed notes and checkpoints', () => {
  it('opens a note signed by the verifier key and reads the checkpoint in it', async () => {
    const text = checkpointText({ origin: 'example.com/log', size: 42, rootHash: new Uint8Array(32).fill(7) });
    expect(text).toBe(`example.com/log\n42\n${toBase64(new Uint8Array(32).fill(7))}\n`);
    const { note, vkey } = await signedNote('example.com/log', text);
    expect(vkey).toMatch(/^example\.com\/log\+[0-9a-f]{8}\+[A-Za-z0-9+/]+=*$/);
    expect(parseCheckpointText(await openNote(note, await parseNoteVerifierKey(vkey)))).toEqual({
      origin: 'example.com/log',
      size: 42,
      rootHash: new Uint8Array(32).fill(7),
    });
  });

  it('ignores other signers (witness cosignatures) but refuses a note without a good signature by the key', async () => {
    const text = 'example.com/log\n1\nAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\n';
    const { note, vkey } = await signedNote('example.com/log', text);
    const witness = await signedNote('witness.example', text);
    const cosigned = `${note}${witness.note.slice(text.length + 1)}`;
    const verifier = await parseNoteVerifierKey(vkey);
    expect(await openNote(cosigned, verifier)).toBe(text);
    await expect(openNote(note.replace('\n1\n', '\n2\n'), verifier)).rejects.toThrow(/no valid signature/);
    await expect(openNote(witness.note, verifier)).rejects.toThrow(TlogFormatError);
    await expect(openNote(text, verifier)).rejects.toThrow(/blank line/);
  });

  it('refuses verifier keys whose key ID does not match, or of another type', async () => {
    const { vkey } = await signedNote('example.com/log', 'x\n');
    await expect(parseNoteVerifierKey(vkey.replace(/\+[0-9a-f]{8}\+/, '+deadbeef+'))).rejects.toThrow(/key ID/);
    const [, name, id, key] = /^([^+]+)\+([^+]+)\+(.+)$/.exec(vkey) as unknown as [string, string, string, string];
    const typed = fromBase64(key);
    typed[0] = 0x02;
    await expect(parseNoteVerifierKey(`${name}+${id}+${toBase64(typed)}`)).rejects.toThrow(/Ed25519/);
    await expect(parseNoteVerifierKey('no plus signs')).rejects.toThrow(TlogFormatError);
  });

  it('refuses checkpoints with a size or root that is not what the format says', () => {
    const root = toBase64(new Uint8Array(32));
    expect(() => parseCheckpointText(`o\n01\n${root}\n`)).toThrow(/size/);
    expect(() => parseCheckpointText(`o\n1\n${toBase64(new Uint8Array(31))}\n`)).toThrow(/32 bytes/);
    expect(() => parseCheckpointText(`o\n1\n${root}`)).toThrow(TlogFormatError);
    expect(() => fromBase64('not base64!')).toThrow(/base64/);
  });
});

describe('tlog-proof', () => {
  it('writes and reads the c2sp.org/tlog-proof@v1 text, skipping an extra line', () => {
    const proof = {
      index: 73_894,
      path: [new Uint8Array(32).fill(1), new Uint8Array(32).fill(2)],
      checkpoint: 'o\n2\nroot\n\n\u2014 o sig\n',
    };
    const text = formatTlogProof(proof);
    expect(text.split('\n').slice(0, 2)).toEqual(['c2sp.org/tlog-proof@v1', 'index 73894']);
    expect(parseTlogProof(text)).toEqual(proof);
    expect(parseTlogProof(text.replace('\nindex', '\nextra AAAA\nindex'))).toEqual(proof);
    expect(() => parseTlogProof(text.replace('index 73894', 'index 073894'))).toThrow(/index/);
    expect(() => parseTlogProof(text.replace('tlog-proof@v1', 'tlog-proof@v2'))).toThrow(TlogFormatError);
  });
});
