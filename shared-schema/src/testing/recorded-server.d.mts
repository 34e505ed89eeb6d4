export interface RecordedRequest {
  method: string;
  url: string;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

export interface RecordedAnswer {
  status: number;
  body: unknown;
  contentType?: string;
  headers?: Record<string, string>;
}

export interface RecordedServer {
  url: string;
  requests: RecordedRequest[];
  close(): Promise<void>;
}

export function startRecordedServer(route: (request: RecordedRequest) => RecordedAnswer): Promise<RecordedServer>;
