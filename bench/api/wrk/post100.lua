-- POST 100 new terms in one request, into a random set. Ranks end in a
-- letter: FerryRank refuses a trailing "0" (it leaves no room before it).
package.path = os.getenv("BENCH_LUA") .. "/?.lua;" .. package.path
local c = require("common")
setup = c.setup
local sets, path, kinto, n
function init(args)
  c.seed()
  sets = c.lines(c.dir .. "/sets.txt")
  path = os.getenv("BENCH_PATH")
  kinto = os.getenv("BENCH_KINTO") == "1"
  n = 0
end
function request()
  n = n + 1
  local set = sets[math.random(#sets)]
  local items = {}
  for i = 1, 100 do
    local fields = '"set_id":"' .. set .. '","word":"new ' .. n .. '.' .. i .. '","definition":"d","rank":"V' .. string.format("%03d", i) .. 'V"'
    if kinto then
      items[i] = '{"method":"POST","path":"/buckets/bench/collections/terms/records","body":{"data":{' .. fields .. '}}}'
    else
      items[i] = '{' .. fields .. '}'
    end
  end
  local body
  if kinto then body = '{"requests":[' .. table.concat(items, ",") .. ']}' else body = '[' .. table.concat(items, ",") .. ']' end
  return wrk.format("POST", path, { ["Authorization"] = c.auth, ["Content-Type"] = "application/json" }, body)
end
