/**
 * The YAML parser, in a module of its own so that readers load it only when they read a file
 * (`await import('./yaml-parser.js')`). A static import of the CommonJS package keeps its named
 * exports in the bundles too: a dynamic import of the package itself gives a bundle only its default.
 */
export { parse as parseYaml } from 'yaml';
export { stringify as stringifyYaml } from 'yaml';
