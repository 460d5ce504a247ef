-- GET BENCH_PATH with a bearer picked at random per request from
-- BENCH_DIR/ghosts.txt (tokens naming kids no JWKS lists: bench/auth/jwt-burst.sh).
package.path = os.getenv("BENCH_LUA") .. "/?.lua;" .. package.path
local c = require("common")
setup = c.setup
local requests
init = function(args)
  c.seed()
  requests = {}
  for _, token in ipairs(c.lines(c.dir .. "/ghosts.txt")) do
    requests[#requests + 1] = wrk.format("GET", os.getenv("BENCH_PATH"), { ["Authorization"] = "Bearer " .. token })
  end
end
request = function() return requests[math.random(#requests)] end
