-- PATCH one row: a new definition, unconditional (If-Match: *).
package.path = os.getenv("BENCH_LUA") .. "/?.lua;" .. package.path
local c = require("common")
setup = c.setup
c.write("PATCH", function(unique, kinto)
  local fields = '{"definition":"patched ' .. unique .. '"}'
  if kinto then return '{"data":' .. fields .. '}' end
  return fields
end)
