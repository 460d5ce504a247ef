-- Index: the 100 terms of a random set (BENCH_PATH .. set id), set ids from BENCH_DIR/sets.txt.
package.path = os.getenv("BENCH_LUA") .. "/?.lua;" .. package.path
local c = require("common")
setup = c.setup
c.gets("sets.txt", function() return os.getenv("BENCH_PATH") end, function()
  return { ["Authorization"] = c.auth }
end)
