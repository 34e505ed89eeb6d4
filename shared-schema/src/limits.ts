/** Every numeric limit of the service (docs/CONTRACT.md#limits, docs/CONTRACT.md#answers-to-the-specifications-gaps). */
export const limits = {
  /** Gate requests per credential (API key or Bearer subject) per minute. */
  gatePerCredentialPerMinute: 1000,
  /** Demo requests per client IP per hour (Variant A and B). */
  demoPerIpPerHour: 100,
  /** Unauthenticated gate requests per client IP per hour (Variant B). */
  publicGatePerIpPerHour: 100,
  /**
   * Longest request target (path and query), in bytes: longer is 414 uri_too_long. The request line
   * and headers together may take 16 KiB (Node's default, which the origin keeps); past that both
   * planes answer 431 headers_too_large.
   */
  urlMaxBytes: 8 * 1024,
  headersMaxBytes: 16 * 1024,
  /** Largest JSON request body, in bytes. */
  jsonBodyMaxBytes: 64 * 1024,
  /** Largest body of an origin <-> edge internal call (a sync batch of up to 500 voice records). */
  internalBodyMaxBytes: 4 * 1024 * 1024,
  /** Largest audio file, in bytes, and its longest duration, in seconds. */
  audioMaxBytes: 20 * 1024 * 1024,
  audioMaxSeconds: 300,
  /** Files per enrollment request. */
  enrollMaxFiles: 10,
  /**
   * Files of one sample per screening request: recordings of one speaker, combined as an enrollment
   * combines them (docs/INTEGRATION.md, "Screening": more speech finds a protected voice more often).
   */
  screenMaxFiles: 10,
  /** Detected speech an enrollment needs in total, in seconds. */
  enrollMinSpeechSeconds: 10,
  /** A spoken-consent challenge serves one enrollment within this many seconds of being issued. */
  consentChallengeTtlSeconds: 10 * 60,
  /**
   * Challenges each owner may ask for per minute, beyond which 429: a person asks for a few, the demo
   * seed (launch/demo-seed.ts) about twenty until one has a phrase its recorded speaker can read.
   */
  consentChallengesPerOwnerPerMinute: 60,
  /** Words (digits) of a challenge phrase. */
  consentPhraseWords: 6,
  /** Longest spoken-consent recording, in seconds: the statement and the phrase take about 10. */
  spokenConsentMaxSeconds: 30,
  /** Bearer access token lifetime (docs/CONTRACT.md#answers-to-the-specifications-gaps: 15 min). */
  accessTokenTtlSeconds: 15 * 60,
  /** Refresh token lifetime (30 days), rotated on every use. */
  refreshTokenTtlSeconds: 30 * 24 * 60 * 60,
  /** Default authorization token lifetime (docs/CONTRACT.md#authorization-tokens). */
  authorizationTokenTtlSeconds: 300,
  /** Login attempts allowed per account and per client IP within the window. */
  loginAttemptsPerAccount: 10,
  loginAttemptsPerIp: 100,
  loginWindowSeconds: 15 * 60,
  /** Clock skew accepted on origin/edge internal calls. */
  internalRequestMaxSkewSeconds: 300,
  /** Password length bounds (bytes of UTF-8 are what scrypt sees; 1024 bounds the work). */
  passwordMinLength: 12,
  passwordMaxLength: 1024,
  /** File verifications (POST /api/v1/provenance/verify) per minute: per client IP without credentials, per key or account with. */
  provenanceVerifyAnonymousPerMinute: 10,
  provenanceVerifyPerCredentialPerMinute: 120,
  /** Largest C2PA manifest store a file may carry, in bytes, and the most assertions its manifests may hold. */
  manifestStoreMaxBytes: 256 * 1024,
  manifestMaxAssertions: 64,
  /**
   * Bounds on an uploaded file's structure, checked before any parser sees it (docs/OPERATIONS.md,
   * "Bounded parsing"): ISO BMFF boxes, RIFF chunks, ID3 frames and the JUMBF boxes of its manifest
   * store, counted together, and how deep they nest. c2pa-rs slows quadratically with the box count
   * (100,000 boxes took a minute); a real recording holds a few dozen.
   */
  containerMaxBoxes: 2048,
  containerMaxDepth: 16,
  /** Longest a worker thread may read one file's Content Credentials; past it the thread is killed and replaced. */
  manifestReadDeadlineMs: 5000,
  /** Signing certificates a platform may hold registered (live and revoked), and the largest PEM accepted. */
  signingCertificatesPerPlatform: 20,
  signingCertificatePemMaxBytes: 16 * 1024,
  /** Longest platform name, in characters (the characters it may have are all ASCII). */
  platformNameMaxLength: 100,
  /**
   * Windows (of two 4.8 s watermark frames each) the watermark detector reads in one file at most:
   * contiguous up to 77 s, spread evenly over longer input, so hours cost the same as 77 s. Each
   * window is decoded at most once, plus once for all of them together: with the CRC-24 this bounds
   * false payloads to 16 · 2⁻²⁴ < 10⁻⁶ per file (docs/WATERMARK.md).
   */
  watermarkDetectMaxWindows: 15,
  /**
   * The soft-binding resolution API (lookups by binding or content, manifests), per minute: per
   * client IP without credentials, per key or account with (as verify).
   */
  provenanceLookupAnonymousPerMinute: 30,
  provenanceLookupPerCredentialPerMinute: 600,
} as const;
