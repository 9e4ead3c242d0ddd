import { test } from 'node:test';
import assert from 'node:assert/strict';
import { describeJsonProblem, parseStrictJson } from './strict-json.js';

test('parses like JSON.parse, "__proto__" included as an own key', () => {
  const text = '{ "a": [1, -2.5e3, true, false, null, "x\\\\u0041\\\\n"], "__proto__": {"b": {}} }';
  const parsed = parseStrictJson(text);
  assert.ok(parsed.ok);
  assert.deepEqual(parsed.value, JSON.parse(text));
  assert.equal(Object.getPrototypeOf(parsed.value), Object.prototype);
  assert.deepEqual(Object.keys(parsed.value as object), ['a', '__proto__']);
});

test('refuses duplicates with their position and object, and depth past the limit', () => {
  const dup = parseStrictJson('{"auths":{"q":1, "q":2}}');
  assert.deepEqual(dup, { ok: false, problem: { kind: 'duplicate', position: 17, path: ['auths'] } });
  assert.match(
    describeJsonProblem(dup.ok ? assert.fail() : dup.problem),
    /^duplicate key in "auths" \(at offset 17\)/,
  );
  assert.equal(parseStrictJson(`${'['.repeat(64)}${']'.repeat(64)}`).ok, true);
  const deep = parseStrictJson(`${'['.repeat(65)}${']'.repeat(65)}`);
  assert.ok(!deep.ok && deep.problem.kind === 'depth');
  assert.ok(!parseStrictJson('['.repeat(100_000)).ok, 'no stack overflow');
});

test('allowDuplicates reports every member, overwritten ones too, for the credential finder', () => {
  const seen: string[] = [];
  const parsed = parseStrictJson('{"a":{"t":"one","t":"two"}}', {
    allowDuplicates: true,
    onMember: (path, v) => seen.push(`${path.join('.')}=${JSON.stringify(v)}`),
  });
  assert.ok(parsed.ok);
  assert.deepEqual(seen, ['a.t="one"', 'a.t="two"', 'a.t={"t":"two"}'.replace('a.t=', 'a=')]);
});

test('refuses what JSON refuses: control characters in strings, bad escapes, trailing text', () => {
  for (const text of ['"a\u0001"', '"\\x41"', '{"a":1}x', '[1,]', '{"a" 1}', '01', '']) {
    assert.equal(parseStrictJson(text).ok, false, JSON.stringify(text));
  }
});
