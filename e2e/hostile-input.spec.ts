// Bad percent-encoding in a path, through the real Next.js server: Next would fail decoding it into
// route parameters and answer a bare 500; proxy.ts answers 400 first, and the server stays up.
import { expect, test } from "@playwright/test";

for (const path of ["/api/v1/instances/%zz", "/api/v1/tenants/acme/circuit-breakers/a%ED%A0%80", "/api/trpc/%zz", "/t/acme/%E0%A4%A"]) {
  test(`${path} is a 400, not a 500`, async ({ request }) => {
    const response = await request.get(path, { maxRedirects: 0 });
    expect(response.status()).toBe(400);
    expect(await response.text()).toBe("Invalid URL: the path is not valid percent-encoded UTF-8");
    expect((await request.get("/api/v1/health/live")).status()).toBe(200);
  });
}
