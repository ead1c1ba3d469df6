// Parsing the model package's files: every tensor the forward pass needs, at
// its expected length, and a clear error when the files are not that model.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'chai';
import { modelDirectory } from '../../src/embedding/load-node.js';
import { type Manifest, MODEL, parseWeights } from '../../src/embedding/weights.js';

const dir = modelDirectory();
const manifest = JSON.parse(readFileSync(join(dir, 'model.json'), 'utf8')) as Manifest;
const shards = manifest.weightsManifest[0].paths.map((p) => readFileSync(join(dir, p)));

describe('embedding weights', () => {
  it('parses the shipped model: embeddings, both layers, the tanh layer', () => {
    const w = parseWeights(manifest, shards);
    expect(w.embeddings).to.have.length(MODEL.vocabSize * MODEL.inputWidth);
    expect(w.layers[1].ffn1).to.have.length(MODEL.width * MODEL.ffnWidth);
    expect(w.tanh).to.have.length(MODEL.width * MODEL.width);
    expect(w.layers[0].queryScale).to.be.closeTo(1 / 8, 1e-7);
    expect(w.layers[1].queryScale).to.be.closeTo(1 / Math.sqrt(128), 1e-7);
    // The shards' first float is the first tensor's (layer 1's conv2) first value.
    expect(w.layers[1].ffn2[0]).to.equal(new Float32Array(new Uint8Array(shards[0].subarray(0, 4)).buffer)[0]);
  });

  it('names a missing tensor, and a manifest that does not cover the shards', () => {
    const without = structuredClone(manifest);
    const weights = without.weightsManifest[0].weights;
    weights[weights.findIndex((t) => t.name === 'module/Embeddings_en')].name = 'renamed';
    expect(() => parseWeights(without, shards)).to.throw(/no tensor module\/Embeddings_en/);
    const reshaped = structuredClone(manifest);
    const tanh = reshaped.weightsManifest[0].weights.find((t) => t.name.endsWith('tanh_layer_0/bias'))!;
    tanh.shape = [256];
    expect(() => parseWeights(reshaped, shards)).to.throw(/covers/);
    expect(() => parseWeights(manifest, shards.slice(0, -1))).to.throw(/covers/);
  });
});
