-- PUT one row: every client field, unconditional (If-Match: *). Ferry: the
-- term's set_id is read-only and left out, so the row stays in its set.
-- Kinto (BENCH_KINTO=1): the record's data is replaced, set_id and all.
package.path = os.getenv("BENCH_LUA") .. "/?.lua;" .. package.path
local c = require("common")
setup = c.setup
c.write("PUT", function(unique, kinto)
  local fields = '{"word":"put","definition":"put ' .. unique .. '","rank":"0050V"}'
  if kinto then return '{"data":' .. fields .. '}' end
  return fields
end)
