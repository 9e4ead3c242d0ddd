// Import resolver (eslint-module-utils interface version 2) for eslint-plugin-boundaries: src/ imports
// its TypeScript modules by the name they have once compiled (`./x.js` for `x.ts`, NodeNext style), which
// the plugin's default Node.js resolver cannot find. Packages and builtins are not resolved: the layer
// rule looks only at files of src/.
'use strict';
const { existsSync } = require('node:fs');
const { dirname, resolve } = require('node:path');

exports.interfaceVersion = 2;

exports.resolve = function (source, file) {
  if (!source.startsWith('.')) return { found: false };
  const target = resolve(dirname(file), source);
  for (const candidate of [target.replace(/\.js$/, '.ts'), target, `${target}.ts`, `${target}/index.ts`]) {
    if (existsSync(candidate)) return { found: true, path: candidate };
  }
  return { found: false };
};
