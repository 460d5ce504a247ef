-- Index: the 100 terms of a random set (BENCH_PATH .. set id), set ids from BENCH_DIR/sets.txt.
package.path = os.getenv("BENCH_LUA") .. "/?.lua;" .. package.path
local c = require("common")
setup = c.setup
-- BENCH_ACCEPT_ENCODING, when set, goes as Accept-Encoding (bench/first-sync/gzip-levels.sh).
c.gets("sets.txt", function() return os.getenv("BENCH_PATH") end, function()
  local headers = { ["Authorization"] = c.auth }
  local encoding = os.getenv("BENCH_ACCEPT_ENCODING")
  if encoding and encoding ~= "" then headers["Accept-Encoding"] = encoding end
  return headers
end)
