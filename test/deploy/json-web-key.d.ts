// edge-gate/src/config.ts names the Workers' global JsonWebKey type; Node has the same shape in node:crypto.
type JsonWebKey = import('node:crypto').JsonWebKey;
