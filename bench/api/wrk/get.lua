-- GET one row by id (BENCH_PATH_PREFIX .. id), ids from BENCH_DIR/ids.txt;
-- with If-None-Match: BENCH_IF_NONE_MATCH when set.
package.path = os.getenv("BENCH_LUA") .. "/?.lua;" .. package.path
local c = require("common")
setup = c.setup
c.gets("ids.txt", function() return os.getenv("BENCH_PATH_PREFIX") end, function()
  local headers = { ["Authorization"] = c.auth }
  local etag = os.getenv("BENCH_IF_NONE_MATCH")
  if etag then headers["If-None-Match"] = etag end
  return headers
end)
