// passatk's call channel for JavaScript and TypeScript: a call server for the sample, a proxy for the judge.
// Descriptor 3, one JSON line a call; valid as TypeScript too (everything it uses comes through require).
const __passatk = (() => {
  const fs = require("fs");
  const proc = require("process");
  const Buf = require("buffer").Buffer;
  const LIMIT = 16 << 20;
  const BAD = new Error("protocol violation");
  let pending = Buf.alloc(0);
  function line() {
    for (;;) {
      const nl = pending.indexOf(10);
      if (nl >= 0) {
        const text = pending.subarray(0, nl).toString("utf8");
        pending = pending.subarray(nl + 1);
        return text;
      }
      if (pending.length > LIMIT) return null;
      const buf = Buf.alloc(65536);
      let n = 0;
      try {
        n = fs.readSync(3, buf, 0, buf.length, null);
      } catch (e) {
        if (e && e.code === "EAGAIN") continue;
        return null;
      }
      if (n <= 0) return null;
      pending = Buf.concat([pending, buf.subarray(0, n)]);
    }
  }
  function send(text) {
    try {
      const b = Buf.from(text, "utf8");
      let at = 0;
      while (at < b.length) at += fs.writeSync(3, b, at);
      return true;
    } catch (e) {
      return false;
    }
  }
  function enc(v, d) {
    if (d > 200) throw BAD;
    if (v === null) return null;
    if (v === undefined) return ["u"];
    const t = typeof v;
    if (t === "boolean" || t === "string") return v;
    if (t === "number") return Number.isSafeInteger(v) && !Object.is(v, -0) ? v : ["f", Object.is(v, -0) ? "-0" : String(v)];
    if (t === "bigint") return ["i", v.toString()];
    if (Array.isArray(v)) return ["l", ...Array.from(v, (x) => enc(x, d + 1))];
    if (v instanceof Map) return ["m", ...Array.from(v, (kv) => ["t", enc(kv[0], d + 1), enc(kv[1], d + 1)])];
    const proto = t === "object" ? Object.getPrototypeOf(v) : undefined;
    if (proto === Object.prototype || proto === null) return ["d", ...Object.keys(v).map((k) => ["t", k, enc(v[k], d + 1)])];
    return ["?", Object.prototype.toString.call(v)];
  }
  const FLOAT = /^(?:-?(?:Infinity|0|[1-9][0-9]*)(?:\.[0-9]+)?(?:e[+-]?[0-9]+)?|-?0?\.[0-9]+(?:e[+-]?[0-9]+)?|NaN)$/;
  function pairs(items, d) {
    return items.map((p) => {
      if (!Array.isArray(p) || p.length !== 3 || p[0] !== "t") throw BAD;
      return [dec(p[1], d + 1), dec(p[2], d + 1)];
    });
  }
  function dec(t, d) {
    if (d > 200) throw BAD;
    if (t === null || typeof t === "boolean" || typeof t === "string") return t;
    if (typeof t === "number") {
      if (!Number.isSafeInteger(t)) throw BAD;
      return t;
    }
    if (!Array.isArray(t) || typeof t[0] !== "string") throw BAD;
    const rest = t.slice(1);
    switch (t[0]) {
      case "u":
        if (rest.length) throw BAD;
        return undefined;
      case "f":
        if (rest.length !== 1 || typeof rest[0] !== "string" || !FLOAT.test(rest[0])) throw BAD;
        return Number(rest[0]);
      case "i":
        if (rest.length !== 1 || typeof rest[0] !== "string" || !/^-?[0-9]{1,4000}$/.test(rest[0])) throw BAD;
        return BigInt(rest[0]);
      case "l":
        return rest.map((x) => dec(x, d + 1));
      case "m":
        return new Map(pairs(rest, d));
      case "d": {
        const o = {};
        for (const [k, v] of pairs(rest, d)) {
          if (typeof k !== "string") throw BAD;
          Object.defineProperty(o, k, { value: v, enumerable: true, writable: true, configurable: true });
        }
        return o;
      }
      case "?":
        if (rest.length !== 1 || typeof rest[0] !== "string") throw BAD;
        return Symbol(rest[0]); // a value of a kind the channel does not carry: equal to nothing
      default:
        throw BAD;
    }
  }
  function broken(why) {
    fs.writeSync(2, "passatk: " + why + "\n");
    proc.exit(3);
  }
  // The sample's side: answer each call until the judge closes the channel.
  function serve(fn) {
    for (;;) {
      const text = line();
      if (text === null) return;
      let args = [];
      try {
        const t = JSON.parse(text);
        if (!Array.isArray(t)) throw BAD;
        args = t.map((x) => dec(x, 0));
      } catch (e) {
        proc.exit(2);
      }
      let out = "";
      try {
        out = JSON.stringify(["ok", enc(fn(...args), 0)]);
      } catch (e) {
        out = JSON.stringify(["raised", String((e && e.stack) || e).slice(0, 300)]);
      }
      if (!send(out + "\n")) return;
    }
  }
  // The judge's side: the entry point's body.
  function call(args) {
    let text = "";
    try {
      text = JSON.stringify(args.map((x) => enc(x, 0)));
    } catch (e) {
      broken("the tests passed a value the channel cannot carry: " + e);
    }
    if (!send(text + "\n")) broken("the sample's process ended while the tests were calling it");
    const answer = line();
    if (answer === null) broken("the sample's process ended while the tests were waiting for it");
    let t = null;
    try {
      t = JSON.parse(answer);
    } catch (e) {
      broken("protocol violation: an answer the tests cannot read");
    }
    if (Array.isArray(t) && t.length === 2 && t[0] === "ok") {
      try {
        return dec(t[1], 0);
      } catch (e) {
        broken("protocol violation: an answer the tests cannot read");
      }
    }
    if (Array.isArray(t) && t.length === 2 && t[0] === "raised" && typeof t[1] === "string") {
      fs.writeSync(2, "passatk: the sample raised: " + t[1].slice(0, 200) + "\n");
      proc.exit(1);
    }
    broken("protocol violation: an answer the tests cannot read");
  }
  return { serve: serve, call: call };
})();
