--[[
seedance: fail-open hold for `seedance slurm` (issue 27), a Slurm job_submit/lua plugin.

Install: copy to the directory of slurm.conf as job_submit.lua, set JobSubmitPlugins=lua in
slurm.conf and `scontrol reconfigure`. Debian 12 ships the plugin (slurm-wlm's job_submit_lua.so,
linked against liblua5.1).

A new job of a partition the controller manages is held (priority 0, "JobHeldAdmin") only while the
controller's heartbeat is fresh: the file HEARTBEAT holds the Unix time of its last cycle, written
every cycle (slurm.heartbeat in seedance-config.yaml). When the file is missing, unreadable or
older than FAIL_OPEN_AFTER seconds, the job is left alone and Slurm schedules it as it would
without seedance (fail-open). Jobs of other partitions are never touched. The plugin reads one
small file per submission and never rejects a job.

Keep the three settings below in step with seedance-config.yaml (slurm.partition,
slurm.heartbeat, slurm.fail_open_after).
--]]

local MANAGED = { gpu = true }                               -- slurm.partition
local HEARTBEAT = "/var/lib/seedance/slurm.heartbeat"        -- slurm.heartbeat
local FAIL_OPEN_AFTER = 300                                  -- slurm.fail_open_after, seconds
local DEFAULT_PARTITION = "gpu"                              -- the partition a job without -p gets

local function heartbeat_age()
  local f = io.open(HEARTBEAT, "r")
  if f == nil then return nil end
  local t = f:read("*n")
  f:close()
  if t == nil then return nil end
  return os.time() - t
end

local function managed(partition)
  if partition == nil or partition == "" then partition = DEFAULT_PARTITION end
  -- -p a,b: managed when any of them is
  for p in string.gmatch(partition, "[^,]+") do
    if MANAGED[p] then return true end
  end
  return false
end

function slurm_job_submit(job_desc, part_list, submit_uid)
  if not managed(job_desc.partition) then return slurm.SUCCESS end
  local age = heartbeat_age()
  if age ~= nil and age <= FAIL_OPEN_AFTER then
    job_desc.priority = 0  -- held until seedance releases it
  else
    slurm.log_info("seedance: controller heartbeat %s: job of %s left to Slurm (fail-open)",
                   age == nil and "missing" or ("stale by " .. age .. " s"), tostring(job_desc.partition))
  end
  return slurm.SUCCESS
end

function slurm_job_modify(job_desc, job_rec, part_list, modify_uid)
  return slurm.SUCCESS
end

return slurm.SUCCESS
