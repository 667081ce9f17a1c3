# Helpers the ops tests share (sourced; they read the caller's $build, $work, $root and $here,
# append to its `pids` and call its `fail`).

# A free loopback port: the kernel's choice, released just before use.
free_port() {
  node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'
}
wait_for() {  # wait_for WHAT COMMAND...: up to 60 s, whatever the machine's load
  local what=$1; shift
  for _ in $(seq 1 600); do
    if "$@" >/dev/null 2>&1; then return 0; fi
    sleep 0.1
  done
  fail "$what"
}

start_buyer() {  # start_buyer NAME FLAGS...: a buyer simulator on a port of its choosing
  local name=$1; shift
  "$build/workers/leadflow-buyer-sim" --name "$name" --port 0 "$@" > "$work/$name.out" 2> "$work/$name.log" &
  pids+=($!)
}
buyer_port() { sed -n 's/.*"port":\([0-9]*\).*/\1/p' "$work/$1.out"; }
buyer_ready() { [[ -n $(buyer_port "$1") ]]; }

# start_prometheus METRICS_PORT: a real Prometheus scraping leadflow's metrics listener every
# second and evaluating k8s/base/monitoring.yaml's rules as they are every second; sets $prom.
start_prometheus() {
  "$root/tests/k8s/npm_install.sh" "$build/tests/k8s" || fail "cannot install the YAML package"
  (cd "$work" && cp "$here/rules.mjs" . && ln -s "$build/tests/k8s/node_modules" node_modules \
    && node rules.mjs "$root" > rules.yml) || fail "cannot extract the alert rules"
  cat > "$work/prometheus.yml" <<YML
global: {scrape_interval: 1s, scrape_timeout: 1s, evaluation_interval: 1s}
rule_files: [$work/rules.yml]
scrape_configs:
  - job_name: leadflow
    static_configs: [{targets: ['127.0.0.1:$1']}]
YML
  local prom_port
  prom_port=$(free_port)
  "$prometheus_bin" --config.file="$work/prometheus.yml" --storage.tsdb.path="$work/tsdb" \
    --web.listen-address="127.0.0.1:$prom_port" --log.level=warn > "$work/prometheus.out" 2> "$work/prometheus.log" &
  pids+=($!)
  prom="http://127.0.0.1:$prom_port"
  wait_for "Prometheus did not become ready" curl -sf "$prom/-/ready"
}
