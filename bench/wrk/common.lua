-- Shared by the bench scripts: reads ids (one per line) and the auth header
-- from the environment the runner exports.
local M = {}

function M.lines(path)
  local out = {}
  for line in io.lines(path) do
    if line ~= "" then out[#out + 1] = line end
  end
  return out
end

M.auth = os.getenv("BENCH_AUTH")
M.dir = os.getenv("BENCH_DIR")
return M
