// Gates per page of the inbox: shared by the inbox and the page that reads its first page.
export const PAGE_SIZE = 25;
