-- GET one row by id (BENCH_PATH_PREFIX .. id), ids from BENCH_DIR/ids.txt.
package.path = os.getenv("BENCH_LUA") .. "/?.lua;" .. package.path
local c = require("common")
setup = c.setup
local ids, prefix, etag
function init(args)
  c.seed()
  ids = c.lines(c.dir .. "/ids.txt")
  prefix = os.getenv("BENCH_PATH_PREFIX")
  etag = os.getenv("BENCH_IF_NONE_MATCH")
end
function request()
  local headers = { ["Authorization"] = c.auth }
  if etag then headers["If-None-Match"] = etag end
  return wrk.format("GET", prefix .. ids[math.random(#ids)], headers)
end
