-- Index: the 100 terms of a random set.
package.path = os.getenv("BENCH_LUA") .. "/?.lua;" .. package.path
local c = require("common")
setup = c.setup
local sets, path
function init(args)
  c.seed()
  sets = c.lines(c.dir .. "/sets.txt")
  path = os.getenv("BENCH_PATH")
end
function request()
  return wrk.format("GET", path .. sets[math.random(#sets)], { ["Authorization"] = c.auth })
end
