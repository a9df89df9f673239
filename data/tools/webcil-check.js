// webcil-check.js: instantiate Webcil .wasm wrappers with node and check
// that getWebcilSize/getWebcilPayload (and for wrapper version 1,
// fillWebcilTable and the TableBase store) hand back the bare payload.
// Usage: node webcil-check.js WRAPPER.wasm PAYLOAD.webcil [...pairs]
'use strict';
const fs = require('fs');
let failed = 0;
for (let i = 2; i + 1 < process.argv.length; i += 2) {
  const wasm = fs.readFileSync(process.argv[i]);
  const want = fs.readFileSync(process.argv[i + 1]);
  const name = process.argv[i];
  if (!WebAssembly.validate(wasm)) { console.log(`${name}: invalid module`); failed++; continue; }
  const memory = new WebAssembly.Memory({ initial: 1 });
  const table = new WebAssembly.Table({ initial: 4, element: 'anyfunc' });
  const imports = { webcil: {
    memory,
    stackPointer: new WebAssembly.Global({ value: 'i32', mutable: true }, 0),
    imageBase: new WebAssembly.Global({ value: 'i32', mutable: false }, 0x1000),
    tableBase: new WebAssembly.Global({ value: 'i32', mutable: false }, 2),
    table,
  } };
  const mod = new WebAssembly.Module(wasm);
  const needed = WebAssembly.Module.imports(mod).map(x => x.name);
  const inst = new WebAssembly.Instance(mod, { webcil: Object.fromEntries(needed.map(n => [n, imports.webcil[n]])) });
  const ex = inst.exports;
  const version = ex.webcilVersion.value;
  ex.getWebcilSize(0);
  const size = new DataView(memory.buffer).getUint32(0, true);
  if (size > 65536 - 16) throw new Error('payload too large for this check');
  ex.getWebcilPayload(16, size);
  const got = Buffer.from(memory.buffer, 16, size);
  const expect = Buffer.from(want);
  let ok = size === want.length;
  if (version >= 1) {
    // getWebcilPayload stores tableBase into the header's TableBase field (offset 28)
    ok = ok && got.readUInt32LE(28) === 2;
    expect.writeUInt32LE(2, 28);
    ex.fillWebcilTable();
    ok = ok && table.get(2) !== null && table.get(2)(41) === 41;
  }
  ok = ok && Buffer.compare(got, expect) === 0;
  console.log(`${name}: wrapper version ${version}, payload ${size} bytes, exports ${WebAssembly.Module.exports(mod).map(e => e.name).join(',')}: ${ok ? 'ok' : 'MISMATCH'}`);
  if (!ok) failed++;
}
process.exit(failed ? 1 : 0);
