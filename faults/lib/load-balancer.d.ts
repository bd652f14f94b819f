export declare class TcpBalancer {
    private readonly backends;
    private readonly server;
    private turn;
    private readonly open;
    /** Client port (as the balancer sees the client) → index of the backend its connection went to. */
    private readonly routes;
    private listening;
    constructor(backends: number[]);
    listen(): Promise<number>;
    get url(): string;
    /** Which backend (index into the ports given) the open connection from client port `port` is piped to. */
    backendOf(clientPort: number): number | undefined;
    close(): Promise<void>;
    private accept;
    /** Connects to backend `first + attempt`; on a refusal tries the next one, once around the ring. */
    private tryBackend;
}
