"""libopus through ctypes: read Ogg Opus files and encode or decode raw Opus packets at 16 kHz.

Only libopus.so.0 is needed (Debian's libopus0), no ffmpeg and no Python package beyond numpy: pack.py
uses it to re-encode the corpus on this machine and gpu_train.py to decode the pack on a GPU machine
that has nothing else. pack.py copies the library into the pack's folder, which is searched first.
"""
import ctypes
import os
import struct

import numpy as np

RATE = 16000  # what the packs hold and the front-end reads; Ogg Opus counts granules at 48 kHz
OGG_RATE = 48000
APPLICATION_VOIP = 2048
SET_BITRATE = 4002
SET_COMPLEXITY = 4010
GET_LOOKAHEAD = 4027
MAX_FRAME = 5760  # 120 ms at 48 kHz: no packet decodes to more
LIBRARY = 'libopus.so.0'

_lib = None
_search = []


def use_library_beside(path):
    """Look for libopus.so.0 in the folder of `path` (a pack) before the system's."""
    _search.insert(0, os.path.join(os.path.dirname(os.path.abspath(path)), LIBRARY))


def library():
    global _lib
    if _lib is None:
        for candidate in [*_search, LIBRARY]:
            try:
                lib = ctypes.CDLL(candidate)
                break
            except OSError:
                continue
        else:
            raise OSError(f'{LIBRARY} not found (apt-get install libopus0, or put it beside the pack)')
        lib.opus_decoder_create.restype = ctypes.c_void_p
        lib.opus_decoder_create.argtypes = [ctypes.c_int32, ctypes.c_int, ctypes.POINTER(ctypes.c_int)]
        lib.opus_decode.restype = ctypes.c_int
        lib.opus_decode.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int32,
                                    ctypes.POINTER(ctypes.c_int16), ctypes.c_int, ctypes.c_int]
        lib.opus_decoder_destroy.argtypes = [ctypes.c_void_p]
        lib.opus_encoder_create.restype = ctypes.c_void_p
        lib.opus_encoder_create.argtypes = [ctypes.c_int32, ctypes.c_int, ctypes.c_int, ctypes.POINTER(ctypes.c_int)]
        lib.opus_encode.restype = ctypes.c_int32
        lib.opus_encode.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_int16), ctypes.c_int,
                                    ctypes.c_char_p, ctypes.c_int32]
        lib.opus_encoder_destroy.argtypes = [ctypes.c_void_p]
        lib.opus_strerror.restype = ctypes.c_char_p
        _lib = lib
    return _lib


def _check(code, what):
    if code < 0:
        raise RuntimeError(f'{what}: {library().opus_strerror(code).decode()}')
    return code


def decode(packets, skip, samples):
    """Mono int16 at 16 kHz from a stream's packets: the first `skip` samples are the codec's delay."""
    lib = library()
    err = ctypes.c_int()
    dec = lib.opus_decoder_create(RATE, 1, ctypes.byref(err))
    _check(err.value, 'opus_decoder_create')
    try:
        buf = (ctypes.c_int16 * MAX_FRAME)()
        view = np.ctypeslib.as_array(buf)
        out = [view[:_check(lib.opus_decode(dec, p, len(p), buf, MAX_FRAME, 0), 'opus_decode')].copy()
               for p in packets]
    finally:
        lib.opus_decoder_destroy(dec)
    wave = np.concatenate(out) if out else np.zeros(0, np.int16)
    return wave[skip:skip + samples]


def encode(wave, kbps, frame_ms=20):
    """Packets of mono int16 16 kHz audio at `kbps` (VBR, the VoIP mode) and the decoder's delay in samples."""
    lib = library()
    err = ctypes.c_int()
    enc = lib.opus_encoder_create(RATE, 1, APPLICATION_VOIP, ctypes.byref(err))
    _check(err.value, 'opus_encoder_create')
    try:
        _check(lib.opus_encoder_ctl(ctypes.c_void_p(enc), SET_BITRATE, ctypes.c_int32(kbps * 1000)), 'bitrate')
        _check(lib.opus_encoder_ctl(ctypes.c_void_p(enc), SET_COMPLEXITY, ctypes.c_int32(10)), 'complexity')
        lookahead = ctypes.c_int32()
        _check(lib.opus_encoder_ctl(ctypes.c_void_p(enc), GET_LOOKAHEAD, ctypes.byref(lookahead)), 'lookahead')
        frame = RATE * frame_ms // 1000
        # zeros after the end push the last samples through the encoder's lookahead
        n = -(-(len(wave) + lookahead.value) // frame) * frame
        pcm = np.zeros(n, np.int16)
        pcm[:len(wave)] = wave
        out = ctypes.create_string_buffer(4000)
        packets = []
        for i in range(0, n, frame):
            chunk = np.ascontiguousarray(pcm[i:i + frame])
            size = _check(lib.opus_encode(enc, chunk.ctypes.data_as(ctypes.POINTER(ctypes.c_int16)), frame, out, 4000),
                          'opus_encode')
            packets.append(out.raw[:size])
    finally:
        lib.opus_encoder_destroy(enc)
    return packets, lookahead.value


def read_ogg_opus(path):
    """Decode a mono Ogg Opus file to int16 at 16 kHz (pre-skip and end trimming as RFC 7845 says)."""
    data = open(path, 'rb').read()
    packets, partial, granule, pos = [], b'', 0, 0
    while pos < len(data):
        if data[pos:pos + 4] != b'OggS':
            raise ValueError(f'{path}: not an Ogg stream at byte {pos}')
        page_granule = struct.unpack_from('<q', data, pos + 6)[0]
        segments = data[pos + 27:pos + 27 + data[pos + 26]]
        body = pos + 27 + len(segments)
        for size in segments:
            partial += data[body:body + size]
            body += size
            if size < 255:  # a lacing value under 255 ends a packet
                packets.append(partial)
                partial = b''
        if page_granule >= 0:
            granule = page_granule
        pos = body
    head = packets[0]
    if head[:8] != b'OpusHead' or head[9] != 1:
        raise ValueError(f'{path}: not mono Ogg Opus')
    preskip = struct.unpack_from('<H', head, 10)[0]
    audio = [p for p in packets[1:] if not p.startswith(b'OpusTags')]
    scale = OGG_RATE // RATE
    return decode(audio, preskip // scale, (granule - preskip) // scale)
