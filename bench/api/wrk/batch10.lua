-- POST /v1/batch of 10 PATCHes to random terms (If-Match: *): what a phone's
-- queue of offline edits sends when it comes back, in one transaction.
package.path = os.getenv("BENCH_LUA") .. "/?.lua;" .. package.path
local c = require("common")
setup = c.setup
local ids, tag, n
function init(args)
  tag = c.seed()
  ids = c.lines(c.dir .. "/ids.txt")
  n = 0
end
function request()
  n = n + 1
  -- Rows in a fixed order, so that two batches sharing a row queue on it instead of deadlocking.
  local chosen = {}
  for i = 1, 10 do chosen[i] = ids[math.random(#ids)] end
  table.sort(chosen)
  local operations = {}
  for i = 1, 10 do
    operations[i] = '{"method":"PATCH","path":"/v1/terms/' .. chosen[i] .. '",'
      .. '"headers":{"If-Match":"*"},"body":{"definition":"batched ' .. tag .. '.' .. n .. '.' .. i .. '"}}'
  end
  local body = '{"operations":[' .. table.concat(operations, ",") .. ']}'
  return wrk.format("POST", "/v1/batch", { ["Authorization"] = c.auth, ["Content-Type"] = "application/json" }, body)
end
