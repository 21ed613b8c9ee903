// Preloaded with `node --require tests/validate/loopback.js …` by the validator's tests: makes
// every TCP server the process starts listen on 127.0.0.1 only, whatever host (or none) the
// program asks for, so a test server is never reachable from another machine.
"use strict";
const net = require("node:net");

const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  const first = args[0];
  if (typeof first === "number" || (typeof first === "string" && /^\d+$/.test(first))) {
    // listen(port[, host][, backlog][, callback])
    const rest = args.slice(1);
    if (typeof rest[0] === "string" || rest[0] === undefined || rest[0] === null) rest.shift();
    return listen.call(this, Number(first), "127.0.0.1", ...rest);
  }
  if (first && typeof first === "object" && !Array.isArray(first) && first.path === undefined) {
    // listen(options[, callback])
    return listen.call(this, { ...first, host: "127.0.0.1" }, ...args.slice(1));
  }
  if (first === undefined || typeof first === "function") {
    // listen([callback]): a random port
    return listen.call(this, 0, "127.0.0.1", ...args);
  }
  return listen.apply(this, args);
};
