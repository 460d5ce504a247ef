-- GET BENCH_PATH, one fixed path (such as the first page of the changes feed),
-- with the bench's Authorization; formatted once, in init().
package.path = os.getenv("BENCH_LUA") .. "/?.lua;" .. package.path
local c = require("common")
setup = c.setup
local req
init = function(args)
  c.seed()
  req = wrk.format("GET", os.getenv("BENCH_PATH"), { ["Authorization"] = c.auth })
end
request = function() return req end
