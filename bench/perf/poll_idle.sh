# Sourced by the bench/perf scripts: with POLL_IDLE=1, holds /dev/cpu_dma_latency at 0 for
# the rest of the calling script (no vCPU halt when idle, as ../shared/peers does), and says
# which idle mode the run has.
if [[ ${POLL_IDLE:-0} == 1 ]]; then
  if [[ -w /dev/cpu_dma_latency ]] && exec {pmqos}>/dev/cpu_dma_latency; then
    printf '\x00\x00\x00\x00' >&"$pmqos"
    echo "# POLL_IDLE: /dev/cpu_dma_latency held at 0"
  else
    echo "# POLL_IDLE requested, /dev/cpu_dma_latency not writable: halting idle"
  fi
fi
