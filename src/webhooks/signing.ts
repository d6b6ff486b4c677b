// Standard Webhooks signatures through the `standardwebhooks` library (the reference implementation): the signed
// content is `${webhook-id}.${webhook-timestamp}.${body}`, HMAC-SHA256 under the base64 key after `whsec_`. During
// a rotation both secrets sign, space-separated, so a receiver holding either verifies.
import { randomBytes } from "node:crypto";
import { Webhook } from "standardwebhooks";

/** A new endpoint secret: `whsec_` and 32 random bytes in base64. */
export const newSecret = (): string => `whsec_${randomBytes(32).toString("base64")}`;

export interface SignedHeaders {
  "webhook-id": string;
  "webhook-timestamp": string;
  "webhook-signature": string;
}

export function signedHeaders(secrets: string[], eventId: string, at: Date, body: string): SignedHeaders {
  const timestamp = Math.floor(at.getTime() / 1000);
  // The library signs with the timestamp's seconds; the header carries the same seconds.
  const signature = secrets.map((secret) => new Webhook(secret).sign(eventId, new Date(timestamp * 1000), body)).join(" ");
  return { "webhook-id": eventId, "webhook-timestamp": String(timestamp), "webhook-signature": signature };
}
