// The console's shell: sign-in with a token (kept for the browser session), the chat list, a chat or the batch
// page, chosen by the URL's hash (#/chat/<id>, #/batches).
import "./no-eval.ts";
import { useCallback, useEffect, useState } from "react";
import { createRoot } from "react-dom/client";
import type { ChatSummary } from "@chatd/client";
import { chatd, errorText, setToken, whoAmI } from "./api.ts";
import { BatchesPage } from "./batches.tsx";
import { ChatView } from "./chat-view.tsx";

const route = () => window.location.hash.replace(/^#\/?/, "");

function SignIn({ onSignedIn }: { onSignedIn: (token: string) => void }) {
  const [value, setValue] = useState("");
  const [error, setError] = useState<string | null>(null);
  // Outside production the server offers its development token (it logs it too).
  useEffect(() => {
    void fetch("/console/config.json").then((r) => r.json() as Promise<{ developmentToken: string | null }>)
      .then((config) => { if (config.developmentToken) setValue((current) => current || config.developmentToken!); }, () => {});
  }, []);
  const submit = async () => {
    setToken(value.trim());
    try {
      await whoAmI();
      onSignedIn(value.trim());
    } catch (e) {
      setError(errorText(e));
    }
  };
  return (
    <form className="signin" onSubmit={(e) => { e.preventDefault(); void submit(); }}>
      <h1>chatd</h1>
      <label htmlFor="token">Token</label>
      <input id="token" value={value} onChange={(e) => setValue(e.target.value)} autoComplete="off" />
      <p className="status">`npm start` logs a development token; `chatd token --user NAME` mints others.</p>
      <button type="submit">Sign in</button>
      {error && <p className="error" role="alert">{error}</p>}
    </form>
  );
}

function Shell() {
  const [signedIn, setSignedIn] = useState(() => {
    const saved = sessionStorage.getItem("chatd-token");
    if (saved) setToken(saved);
    return saved !== null;
  });
  const [path, setPath] = useState(route());
  const [chats, setChats] = useState<ChatSummary[]>([]);
  const refresh = useCallback(() => { void chatd.chats.list({ first: 100 }).then(setChats, () => {}); }, []);
  useEffect(() => {
    const onHash = () => setPath(route());
    window.addEventListener("hashchange", onHash);
    return () => window.removeEventListener("hashchange", onHash);
  }, []);
  useEffect(() => {
    if (!signedIn) return;
    refresh();
    const timer = setInterval(refresh, 3000);
    return () => clearInterval(timer);
  }, [signedIn, path, refresh]);
  if (!signedIn) {
    return <SignIn onSignedIn={(token) => { sessionStorage.setItem("chatd-token", token); setSignedIn(true); }} />;
  }
  const [page, id] = path.split("/");
  return (
    <div className="layout">
      <nav className="sidebar" aria-label="Chats">
        <button type="button" onClick={() => { window.location.hash = `#/chat/new-${crypto.randomUUID().slice(0, 8)}`; }}>New chat</button>{" "}
        <a href="#/batches">Batches</a>
        <ul>{chats.map((c) => (
          <li key={c.chatId}>
            <button type="button" onClick={() => { window.location.hash = `#/chat/${c.chatId}`; }} aria-current={id === c.chatId}>
              {c.title ?? c.chatId.slice(0, 8)}
              <div className="meta">{c.status} · {new Date(c.updatedAt).toLocaleString()}
                {c.pendingStructuredRequests > 0 ? ` · ${c.pendingStructuredRequests} pending` : ""}</div>
            </button>
          </li>))}
        </ul>
      </nav>
      {page === "batches" ? <BatchesPage /> : page === "chat" && id ? (
        <ChatView key={id} chatId={id} onChanged={refresh} onChatCreated={(created) => { window.location.hash = `#/chat/${created}`; }} />
      ) : <div className="main"><p style={{ padding: 16 }}>Choose a chat or start a new one.</p></div>}
    </div>
  );
}

createRoot(document.getElementById("root")!).render(<Shell />);
