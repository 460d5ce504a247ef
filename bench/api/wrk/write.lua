-- PATCH or PUT one row (BENCH_METHOD, default PATCH), unconditional (If-Match: *).
-- PATCH sends a new definition. PUT sends every client field: on Ferry the
-- term's set_id is read-only and left out, so the row stays in its set; on
-- Kinto (BENCH_KINTO=1) the record's data is replaced, set_id and all.
package.path = os.getenv("BENCH_LUA") .. "/?.lua;" .. package.path
local c = require("common")
setup = c.setup
local method = os.getenv("BENCH_METHOD") or "PATCH"
c.write(method, function(unique, kinto)
  local fields
  if method == "PUT" then
    fields = '{"word":"put","definition":"put ' .. unique .. '","rank":"0050V"}'
  else
    fields = '{"definition":"patched ' .. unique .. '"}'
  end
  if kinto then return '{"data":' .. fields .. '}' end
  return fields
end)
