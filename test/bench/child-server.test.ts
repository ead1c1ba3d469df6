// The benches' child server runs with the Node flags `npm start` gives the service.
import { expect } from 'chai';
import { startScriptNodeFlags } from '../../bench/lib/child-server.js';

describe('bench child server flags', () => {
  it("are the flags of package.json's start script, whatever they are", () => {
    expect(startScriptNodeFlags()).to.deep.equal(['--initial-old-space-size=128']);
    expect(startScriptNodeFlags('npm run build && node dist/server.js')).to.deep.equal([]);
    expect(startScriptNodeFlags('npm run build && node --a=1 --b dist/server.js')).to.deep.equal(['--a=1', '--b']);
  });

  it('refuse a start script that does not end in node [flags] dist/server.js', () => {
    expect(() => startScriptNodeFlags('npm run build && tsx src/server.ts')).to.throw(/start script/);
    expect(() => startScriptNodeFlags('node dist/server.js --port 1')).to.throw(/start script/);
  });
});
