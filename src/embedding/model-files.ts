// The files a page needs to embed texts with the shipped model, and the
// manifest the server publishes for them (GET /models/use-lite-512/manifest.json):
// each file at an immutable URL holding its content hash, relative to the
// manifest. No Node import: the SDK reads the manifest in the page.

/** The builtin model's name in the API. */
export const MODEL_NAME = 'use-lite-512';

/** Where its files are, from the service root: `<prefix>/<hash>/<file>`. */
export const MODEL_FILES_PREFIX = `/models/${MODEL_NAME}`;

/** Where its manifest is, from the service root (the SDK resolves it beside /sdk.js). */
export const MODEL_MANIFEST_PATH = `models/${MODEL_NAME}/manifest.json`;

export interface ModelFilesManifest {
  model: typeof MODEL_NAME;
  dimensions: number;
  /** Tokens per text; longer texts are truncated. */
  maxTokens: number;
  /** Total bytes of the files a first use fetches. */
  bytes: number;
  /** URLs relative to the manifest's, `<hash>/<file>`. */
  files: {
    /** The encoder kernel (build/embedding.wasm). */
    encoder: string;
    /** model.json: its weights manifest names the shards' tensors. */
    model: string;
    /** The weight shards, in model.json's order. */
    shards: string[];
    vocab: string;
  };
}
