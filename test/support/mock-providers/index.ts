// Mock provider servers for tests: real HTTP + SSE on 127.0.0.1 (see server.ts).
export { startMockProvider, type CapturedRequest, type MockProviderServer } from "./server.ts";
export {
  barrier,
  type Barrier,
  type MockFixture,
  type MockHold,
  type MockHttpError,
  type MockRawEvents,
  type MockReasoning,
  type MockResponse,
  type MockToolCall,
  type MockTurn,
} from "./script.ts";
