export interface NodeSample {
    pid: number;
    at: string;
    uptime_s: number;
    rss_bytes: number;
    heap_used_bytes: number;
    /** process.getActiveResourcesInfo().length: sockets, timers, handles the event loop is waiting on. */
    active_resources: number;
    event_loop_delay_p99_ms: number;
    event_loop_delay_max_ms: number;
}
